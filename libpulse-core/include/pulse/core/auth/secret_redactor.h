// Secret redaction for text that is persisted or shown beyond its origin (audit entries,
// command previews, transcripts). Replaces the secret part of recognised credentials with
// kRedactedSecret and keeps the surrounding text, so an auditor still sees what happened:
//   * `Authorization:` / `Proxy-Authorization:` values (the scheme word is kept),
//     `Bearer <token>`;
//   * Pulse API tokens (`pulse_` + 43 base64url characters) and well-known provider key
//     formats: `sk-`/`sk_` (OpenAI, Anthropic, OpenRouter, DeepSeek, Stripe), `gsk_`, `xai-`,
//     `AIza` (Google), `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, `glpat-`, `xox?-`
//     (Slack), AWS access key ids (`AKIA`/`ASIA`);
//   * assignments and flags whose name ends in password, passwd, passphrase, secret, token,
//     api_key, apikey, access_key, secret_key, private_key, credential(s), _pwd, psk (Wi-Fi
//     keys), wep-key0..3, key-data / certificate-data (kubeconfig client-key-data,
//     client-certificate-data) — or is an Authorization header name (Authorization,
//     Proxy-Authorization, HTTP_AUTHORIZATION, X-Authorization; never a policy field such as
//     auto_authorization) — (`password=x`, `PGPASSWORD=x`, `MYSQL_PWD=x`, `DB_PASSWORD: "x"`,
//     `"api_key": "x"`, `--password x`, `--token=x`, `psk="x"`, `token: x`), and SQL literals
//     (`PASSWORD 'x'`, `IDENTIFIED BY 'x'`);
//   * values of keys too generic alone when they have a secret's shape: Ceph `key = <base64>`,
//     docker config.json `"auth": "<base64>"`; Ceph secrets anywhere (`AQ...==`, 40 chars);
//   * credential file lines: crypt(3) password hashes (`$6$salt$hash`, `$y$...`, `$2b$...`,
//     `$argon2id$...`: /etc/shadow, opasswd, htpasswd), `.netrc` passwords (`machine h login u
//     password x`, also one keyword a line), `.pgpass` lines (`host:port:db:user:password`),
//     postfix sasl_passwd (`[relay]:587 user:password`) — also inside JSON strings, where a
//     line starts after `\n` or an opening quote;
//   * password flags of command-line clients: `mysql -px` (and mysqldump, mysqladmin,
//     mysqlimport, mysqlcheck, mysqlshow, mariadb, mariadb-dump, mariadb-admin), `sshpass -p x`,
//     `redis-cli -a x` — on the same command, up to a newline, `;`, `|` or `&`;
//   * the password of URL credentials (`https://user:secret@host`);
//   * PEM private key blocks.
// It is a best-effort filter over known shapes, not a proof that text is secret-free. Pure;
// linear in the input; idempotent (redacting twice changes nothing more); thread-compatible.
#pragma once

#include <string>
#include <string_view>

namespace pulse::core {

inline constexpr std::string_view kRedactedSecret = "[REDACTED]";

// `text` with every recognised secret replaced by kRedactedSecret. Bytes that are not part of
// a secret (including NULs and ill-formed UTF-8) are copied unchanged.
std::string RedactSecrets(std::string_view text);

// True when `name` (a field, header, variable or flag name such as `api_key`, `X-API-Token`,
// `DB_PASSWORD`, `--client-secret`) ends in one of the secret-naming words above, so a value
// stored under it is a secret whatever it looks like.
bool NamesSecret(std::string_view name);

}  // namespace pulse::core
