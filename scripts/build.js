// Builds dist/: first the job definition's compiled validator (generate-fast-path.js), then the library with
// tsc (declarations for `import ... from 'gpunet'`), and the commands with esbuild, one bundle per command
// sharing chunks, because loading one bundled file instead of hundreds of modules is most of a command's cold
// start (see bench/validate.bench.ts).
import {execFileSync} from 'node:child_process'
import {readdirSync, rmSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

import {generateFastPath} from './generate-fast-path.js'
import {generateNetworkValidator} from './generate-network-validator.js'
import {oclifStartupPlugin} from './oclif-startup.js'
import {undiciBundlePlugin} from './undici-bundle.js'
import {writeCompletions} from './completions.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const commandFiles = (dir) =>
  readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory() ? commandFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )

await generateFastPath()
await generateNetworkValidator()
rmSync(join(root, 'dist'), {recursive: true, force: true})
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
)

await build({
  absWorkingDir: root,
  entryPoints: [
    join(root, 'src/cli.ts'),
    join(root, 'src/console-filter.ts'),
    ...commandFiles(join(root, 'src/commands')),
    join(root, 'src/hooks/command-not-found.ts'),
    join(root, 'src/help.ts'),
  ].map((f) => relative(root, f)),
  outdir: 'dist',
  outbase: 'src',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  // oclif must stay one shared copy (it owns the Command class); native addons cannot be bundled; and the
  // parsers that are only imported on demand (YAML files, locating errors) load as Node loads
  // them, since a bundled CommonJS chunk would only offer a default export to `await import()`. ws asks for
  // its optional native addons (bufferutil, utf-8-validate) and works without them; bigint-buffer (from the
  // Solana libraries) finds its optional addon relative to its own folder and falls back to JS without it.
  external: [
    'typescript',
    'ts-node',
    'tsx',
    'better-sqlite3',
    'bigint-buffer',
    'litesvm',
    'pg-native',
    'yaml',
    'jsonc-parser',
    'bufferutil',
    'utf-8-validate',
  ],
  // @solana/web3.js's node-fetch is only its fallback for a Connection made without a fetch: in its place the
  // bundle carries one that goes through httpFetch (src/lib/web3-fetch.ts). node-fetch's URL and Unicode tables
  // (whatwg-url, tr46) stay out of every command's start, and tr46's call for Node's deprecated punycode module,
  // which Node 22 and 24 answer with a DEP0040 warning, with them.
  alias: {'node-fetch': './src/lib/web3-fetch.ts'},
  // Prefer packages' ES module builds: their UMD builds require() files that a bundle does not carry.
  mainFields: ['module', 'main'],
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: {
    js: "import {createRequire as __gpunetRequire} from 'node:module'; const require = __gpunetRequire(import.meta.url);",
  },
  plugins: [
    // Start-up costs of oclif, taken out of the bundled copy (see oclif-startup.js).
    oclifStartupPlugin,
    // undici's parts gpunet uses, its dispatcher kept private (see undici-bundle.js).
    undiciBundlePlugin(root),
  ],
  logLevel: 'warning',
})

// The manifest of the commands (oclif.manifest.json), made by loading each built command, with the CLI's console
// filter preloaded; OCLIF_SKIP_NEW_VERSION_CHECK keeps the oclif tool from asking the registry for a newer self.
execFileSync(
  process.execPath,
  ['--import', './dist/console-filter.js', join(root, 'node_modules/oclif/bin/run.js'), 'manifest'],
  {cwd: root, stdio: 'inherit', env: {...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'}},
)
// Shell completion scripts from that manifest (`gpunet completion SHELL`).
writeCompletions()
