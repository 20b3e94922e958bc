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
//     api_key, apikey, access_key, secret_key, private_key, credential(s), authorization or _pwd
//     (`password=x`, `PGPASSWORD=x`, `MYSQL_PWD=x`, `DB_PASSWORD: "x"`, `"api_key": "x"`,
//     `--password x`, `--token=x`), and SQL literals (`PASSWORD 'x'`, `IDENTIFIED BY 'x'`);
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
