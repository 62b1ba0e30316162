// Builds dist/: first the job definition's compiled validator (generate-fast-path.js), then the library with
// tsc (declarations for `import ... from 'gpunet'`), and the commands with esbuild, one bundle per command
// sharing chunks, because loading one bundled file instead of hundreds of modules is most of a command's cold
// start (see bench/validate.bench.ts).
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdirSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {builtinModules} from 'node:module'
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

const entryPoints = [
  ...commandFiles(join(root, 'src/commands')),
  join(root, 'src/cli/hooks/command-not-found.ts'),
  join(root, 'src/cli/help.ts'),
].map((f) => relative(root, f))

// What both builds share: one bundle format aside, the same code, externals and edits.
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: true,
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
  // bundle carries one that goes through httpFetch (src/lib/http/web3-fetch.ts). node-fetch's URL and Unicode tables
  // (whatwg-url, tr46) stay out of every command's start, and tr46's call for Node's deprecated punycode module,
  // which Node 22 and 24 answer with a DEP0040 warning, with them.
  alias: {'node-fetch': './src/lib/http/web3-fetch.ts'},
  // Prefer packages' ES module builds: their UMD builds require() files that a bundle does not carry.
  mainFields: ['module', 'main'],
  plugins: [
    // Start-up costs of oclif, taken out of the bundled copy (see oclif-startup.js).
    oclifStartupPlugin,
    // undici's parts gpunet uses, its dispatcher kept private (see undici-bundle.js).
    undiciBundlePlugin(root),
  ],
  logLevel: 'warning',
}

// The ES modules: one per command, sharing chunks.
await build({
  ...common,
  entryPoints: ['src/cli/main.ts', 'src/cli/console-filter.ts', ...entryPoints],
  outdir: 'dist',
  outbase: 'src',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  format: 'esm',
  sourcemap: 'linked',
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: {
    js: "import {createRequire as __gpunetRequire} from 'node:module'; const require = __gpunetRequire(import.meta.url);",
  },
})

// Node 20's CommonJS bundle of oclif and every command, which src/cli/code-cache.ts runs with V8's code cache. Each
// command, the help class and the hook load on first use (esbuild defers the code a dynamic import reaches), from
// the table src/cli/bundled-modules.ts gives oclif. Named by its content hash: a cache is only ever used with the
// exact code it was made from.
const bundledModules = entryPoints
  .map((file) => {
    const path = file.replaceAll('\\', '/').replace(/^src\//, '')
    return `  ${JSON.stringify(path.replace(/\.ts$/, '.js'))}: () => import(${JSON.stringify(`./${path}`)}),`
  })
  .join('\n')
/** Puts, in place of src/lib/network-connection.ts, a module that throws: see the exec bundle above. */
const localnetOnlyPlugin = {
  name: 'gpunet-localnet-only',
  setup(b) {
    b.onResolve({filter: /\/network-connection\.js$/}, () => ({path: 'network-connection', namespace: 'localnet-only'}))
    b.onLoad({filter: /.*/, namespace: 'localnet-only'}, () => ({
      contents:
        "throw new Error('the plain job exec serves the localnet only: src/cli/fast-start.ts hands other networks to oclif')",
      loader: 'js',
    }))
  },
}

await buildNode20Bundle('gpunet', [
  "import {join} from 'node:path'",
  "import {registerBundledModules} from './cli/bundled-modules.js'",
  "import {runOclif} from './cli/oclif-main.js'",
  'export function run(): Promise<void> {',
  `  registerBundledModules(join(__dirname, '..'), {\n${bundledModules}\n  })`,
  '  return runOclif(import.meta.url)',
  '}',
])
// The plain `job exec` that src/cli/fast-start.ts answers before oclif loads, in a bundle of its own: without a code
// cache, compiling its undici and ws from source costs more than all of oclif does from its cache.
// It serves the localnet only (src/cli/fast-start.ts hands other networks to oclif), so the module that resolves the
// others (and loads web3.js) is left out: were it ever reached, it would fail at once, not silently.
await buildNode20Bundle('exec', ["export {runPlainExec} from './cli/fast-exec.js'"], [localnetOnlyPlugin])

/** Writes dist/node20/<kind>-<hash>.cjs and its map: the CommonJS bundle of `lines` that src/cli/code-cache.ts runs. */
async function buildNode20Bundle(kind, lines, plugins = []) {
  const node20 = await build({
    ...common,
    plugins: [...common.plugins, ...plugins],
    stdin: {
      contents: lines.join('\n'),
      resolveDir: join(root, 'src'),
      sourcefile: `node20-${kind}.ts`,
      loader: 'ts',
    },
    format: 'cjs',
    // Every import() becomes a require(): on Node 20 a function V8 takes from a code cache loses the dynamic import
    // callback of its script, and the bundle's only ES module imports are of files it carries (and of yaml and
    // jsonc-parser, which have CommonJS builds).
    supported: {'dynamic-import': false},
    // Beside it, for tools (Node finds no map of a vm.Script): its name follows the hash that names the bundle.
    sourcemap: 'external',
    write: false,
    outfile: `dist/node20/${kind}.cjs`,
    // The bundle's own address, where the ES modules' code reads import.meta.url (oclif finds the package from it).
    define: {'import.meta.url': '__gpunetBundleUrl'},
    banner: {js: "const __gpunetBundleUrl = require('node:url').pathToFileURL(__filename).href;"},
  })
  const bundle = node20.outputFiles.find((file) => file.path.endsWith('.cjs'))
  const map = node20.outputFiles.find((file) => file.path.endsWith('.map'))
  const source = node20BundleText(bundle.text)
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16)
  mkdirSync(join(root, 'dist/node20'), {recursive: true})
  writeFileSync(join(root, `dist/node20/${kind}-${hash}.cjs`), source)
  writeFileSync(join(root, `dist/node20/${kind}-${hash}.cjs.map`), map.contents)
}

// The manifest of the commands (oclif.manifest.json), made by loading each built command, with the CLI's console
// filter preloaded; OCLIF_SKIP_NEW_VERSION_CHECK keeps the oclif tool from asking the registry for a newer self.
execFileSync(
  process.execPath,
  ['--import', './dist/cli/console-filter.js', join(root, 'node_modules/oclif/bin/run.js'), 'manifest'],
  {cwd: root, stdio: 'inherit', env: {...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'}},
)
// Shell completion scripts from that manifest (`gpunet completion SHELL`).
writeCompletions()

/**
 * The Node 20 bundle as src/cli/code-cache.ts reads it: first a comment naming the built-in modules it requires, then
 * its code with every character past ASCII written as a \\u escape. esbuild leaves a few in regular expressions and
 * license comments, and one makes V8 hold the whole 2.5 MB source two bytes a character (decoding it cost 60 M
 * instructions a run). The escape means the same character in a string, a template, a regular expression or a
 * comment, unless a backslash comes before it (the build stops then). On the few lines that have one, the source
 * map's columns after it are off by five a character.
 */
function node20BundleText(text) {
  const builtins = new Set(builtinModules.filter((name) => !name.startsWith('_')))
  const required = new Set()
  for (const [, name] of text.matchAll(/\brequire\("(?:node:)?([\w/]+)"\)/g)) if (builtins.has(name)) required.add(name)
  const escaped = /\\[^\0-\x7f]/.exec(text)
  if (escaped) throw new Error(`scripts/build.js: the Node 20 bundle escapes a non-ASCII character: ${escaped[0]}`)
  const ascii = text.replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return `/* builtins: ${[...required].sort().join(' ')} */${ascii}`
}
