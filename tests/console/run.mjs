// The console_browser ctest: checks that everything the browser suite needs is there, then runs
// every *.test.mjs file of this directory with node:test, one file at a time (each starts its own
// pulse-server and chromium; two cores do not run several at once well).
//
// Missing tools: exit 77 (ctest reports the test skipped, with the reason) unless CI=true or
// PULSE_REQUIRE_CONSOLE=1, where the suite is required and a missing tool fails it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const required = process.env.CI === 'true' || process.env.PULSE_REQUIRE_CONSOLE === '1';
const fix = 'run cmake/install-deps.sh and cmake/install-node-tools.sh, then reconfigure';

function missing(reason) {
  if (required) {
    console.error(`FAIL: ${reason}; the console browser suite is required here (${fix})`);
    process.exit(1);
  }
  console.log(`SKIP: ${reason}; the console browser suite did not run (${fix})`);
  process.exit(77);
}

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  missing(`node ${process.versions.node} is older than 20 (playwright-core needs 20)`);
}
for (const name of ['playwright-core', 'axe-core']) {
  if (!existsSync(join(here, 'node_modules', name, 'package.json'))) {
    missing(`${name} is not installed in ${join(here, 'node_modules')}`);
  }
}
const chromium = process.env.PULSE_CHROMIUM || '/usr/bin/chromium';
try {
  accessSync(chromium, constants.X_OK);
} catch {
  missing(`no chromium at ${chromium} (Debian's package chromium)`);
}
const server = process.env.PULSE_SERVER_BINARY || '';
if (!server || !existsSync(server)) {
  missing(`no pulse-server binary (PULSE_SERVER_BINARY='${server}')`);
}
if (process.env.PULSE_CONSOLE_BUILT !== 'ON') {
  missing('this build has no console (PULSE_CONSOLE is OFF, or node or its node_modules were missing)');
}

const files = readdirSync(here)
  .filter((name) => name.endsWith('.test.mjs'))
  .sort();
const filter = process.argv[2];
let status = 0;
for (const file of files) {
  if (filter && !file.includes(filter)) {
    continue;
  }
  console.log(`=== ${file}`);
  const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', join(here, file)], {
    stdio: 'inherit',
    cwd: here,
  });
  if (result.status !== 0) {
    status = 1;
  }
}
process.exit(status);
