// Builds the operator console into <out>: assets/app-<hash>.js and assets/app-<hash>.css (one
// bundle each, minified, named by content), index.html referencing them (no inline script or
// style, so the console's Content-Security-Policy can say script-src 'self'), manifest.txt (the
// files, one per line, for embed_assets.cmake) and build.d (a depfile naming every source
// the bundle read, so CMake rebuilds when any of them changes). Fails when the files together
// are over the size budget, gzipped (docs/console.md).
//
// Usage: node build.mjs <out-dir>
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const kBudgetBytes = 300 * 1024;
const here = dirname(fileURLToPath(import.meta.url));

if (process.argv.length !== 3) {
  console.error('usage: node build.mjs <out-dir>');
  process.exit(2);
}
const out = resolve(process.argv[2]);
// Stale bundles of an earlier build would otherwise be embedded too.
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  absWorkingDir: here,
  entryPoints: ['src/main.jsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: 'assets/app-[hash]',
  assetNames: 'assets/[name]-[hash]',
  outdir: out,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((file) =>
  relative(out, resolve(here, file)),
);
const script = outputs.find((file) => file.endsWith('.js'));
const style = outputs.find((file) => file.endsWith('.css'));
if (!script || !style) {
  console.error(`build.mjs: expected one script and one style sheet, got ${outputs.join(', ')}`);
  process.exit(1);
}

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Pulse console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/${style}">
<script type="module" src="/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Pulse console needs JavaScript.</noscript>
</body>
</html>
`;
writeFileSync(join(out, 'index.html'), html);

const files = ['index.html', ...outputs.sort()];
let gzipped = 0;
for (const file of files) {
  gzipped += gzipSync(readFileSync(join(out, file)), { level: 9 }).length;
}
writeFileSync(join(out, 'manifest.txt'), `${files.join('\n')}\n`);

// Every input the bundle read, for the build system's dependency scan.
const inputs = Object.keys(result.metafile.inputs).map((file) => resolve(here, file));
// The directories too: a page added to src/pages/ changes its directory, not a file read.
inputs.push(
  fileURLToPath(import.meta.url),
  join(here, 'package-lock.json'),
  join(here, 'src'),
  join(here, 'src', 'pages'),
);
const escape = (path) => path.replaceAll(' ', '\\ ');
writeFileSync(
  join(out, 'build.d'),
  `${escape(join(out, 'manifest.txt'))}: ${inputs.map(escape).join(' \\\n  ')}\n`,
);

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(`console: ${files.length} files, ${kb(gzipped)} gzipped (budget ${kb(kBudgetBytes)})`);
if (gzipped > kBudgetBytes) {
  console.error(`build.mjs: the console is ${kb(gzipped)} gzipped, over its ${kb(kBudgetBytes)} budget`);
  process.exit(1);
}
