// An esbuild plugin that takes three costs out of every command's start, all in oclif's own code (found with
// `node --cpu-prof`; measured with callgrind, the lazy requires and the sort were 24 M and 69 M instructions of each
// start through oclif on Node 20, where `node -e 0` is 87 M; figures in docs/development.md):
// - Modules oclif requires at load time but uses only off the common path (globbing commands when there is no
//   manifest, plugin patterns, help templates, spinner frames, rc files) load on first use instead: together
//   they are a fifth of oclif's code.
// - oclif imports wsl-utils to tell Windows' Linux from Linux, which no setting gpunet reads depends on.
// - oclif sorts the manifest's command ids with localeCompare, whose first call builds an ICU collator (6 to 14 ms,
//   more than the sort could ever need): the ids are ASCII, so comparing code units gives the same order.
// - On Node 20, which has no compile cache, gpunet runs one CommonJS bundle of oclif and every command (its code
//   cache, src/cli/code-cache.ts): oclif's module loader takes the commands, the help class and the hooks from that
//   bundle when it carries them (src/cli/bundled-modules.ts), instead of importing their ES module files.
// Each edit names the exact text it replaces; when an oclif update changes that text the build stops, so an edit
// is never silently lost or misapplied.
import {readFile} from 'node:fs/promises'

/** Lines of `@oclif/core/lib/<file>` whose module is required lazily (on the first property read). */
const LAZY_REQUIRES = {
  'config/config.js': ['const ejs_1 = __importDefault(require("ejs"));'],
  'config/plugin-loader.js': ['const minimatch_1 = require("minimatch");'],
  'config/plugin.js': ['const tinyglobby_1 = require("tinyglobby");'],
  'help/util.js': ['const ejs_1 = __importDefault(require("ejs"));'],
  'util/read-pjson.js': ['const lilconfig_1 = require("lilconfig");'],
  'ux/action/spinner.js': ['const cli_spinners_1 = __importDefault(require("cli-spinners"));'],
}

/** Other replacements, by file. */
const REPLACEMENTS = {
  // oclif names the platform 'wsl' under Windows' Linux, which it finds by importing wsl-utils (child_process,
  // container probes, /proc reads) at every start; gpunet reads no oclif setting that tells WSL from Linux.
  'config/config.js': [
    ['this.platform = await (0, os_1.getPlatform)();', 'this.platform = (0, node_os_1.platform)();'],
  ],
  'config/plugin.js': [
    ['.sort((a, b) => a.id.localeCompare(b.id));', '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));'],
  ],
  // load, loadWithData and loadWithDataFromManifest: one import each.
  'module-loader.js': Array.from({length: 3}, () => [
    'await import((0, node_url_1.pathToFileURL)(filePath).href)',
    'await __gpunetImport(filePath, node_url_1)',
  ]),
}

/** Functions an edited file calls, put before its code. */
const PRELUDES = {
  'module-loader.js':
    "function __gpunetImport(filePath, url) { return globalThis[Symbol.for('gpunet.bundledModule')]?.(filePath) ?? import(url.pathToFileURL(filePath).href); }\n",
}

// The module object becomes a proxy that requires the module when a member is first read; oclif only ever reads
// members of these objects (`ejs_1.default.render`, `(0, minimatch_1.minimatch)(...)`).
const LAZY_HELPER =
  'function __gpunetLazy(load) { let m; return new Proxy({}, {get: (_, key) => (m ??= load())[key]}); }\n'

/** The files this plugin edits, relative to `@oclif/core/lib`. */
export const OCLIF_EDITED_FILES = [...new Set([...Object.keys(LAZY_REQUIRES), ...Object.keys(REPLACEMENTS)])]

/** Applies the edits to one file's text; throws when a line it expects is not there. */
export function editOclifFile(file, text) {
  let out = text
  const replace = (from, to) => {
    if (!out.includes(from)) {
      throw new Error(`scripts/oclif-startup.js: @oclif/core/lib/${file} no longer contains ${JSON.stringify(from)}`)
    }
    out = out.replace(from, to)
  }
  for (const line of LAZY_REQUIRES[file] ?? []) {
    const lazy = line.replace(/(__importDefault\()?require\("[^"]+"\)\)?/, (call) => `__gpunetLazy(() => ${call})`)
    replace(line, lazy)
  }
  for (const [from, to] of REPLACEMENTS[file] ?? []) replace(from, to)
  if (file === 'module-loader.js' && out.includes('import((0, node_url_1.pathToFileURL)')) {
    throw new Error('scripts/oclif-startup.js: @oclif/core/lib/module-loader.js imports modules in more places')
  }
  return (LAZY_REQUIRES[file] ? LAZY_HELPER : '') + (PRELUDES[file] ?? '') + out
}

/** The esbuild plugin applying the edits to the bundled copy of oclif (node_modules stays untouched). */
export const oclifStartupPlugin = {
  name: 'oclif-startup',
  setup(build) {
    const files = new RegExp(
      `@oclif[\\\\/]core[\\\\/]lib[\\\\/](${OCLIF_EDITED_FILES.join('|').replaceAll('.', '\\.')})$`,
    )
    build.onLoad({filter: files}, async (args) => {
      const file = args.path.replaceAll('\\', '/').split('@oclif/core/lib/')[1]
      return {contents: editOclifFile(file, await readFile(args.path, 'utf8')), loader: 'js'}
    })
  },
}
