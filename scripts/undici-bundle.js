// How the CLI bundle carries undici (scripts/build.js):
// - gpunet's own `import ... from 'undici'` gets the parts it uses (scripts/undici-entry.js says why).
// - The bundled undici keeps its default dispatcher to itself. npm undici, when it loads, installs its Agent as
//   the process-wide dispatcher that Node's own `fetch` also reads, and on Node 20 that Agent breaks Node's fetch
//   for requests that set their own content-length. The library build guards against it by starting Node's fetch
//   first (src/lib/http/builtin-fetch-first.ts), which loads Node's whole built-in copy of undici: 2% of the
//   instructions of `job post` on Node 20, for a fetch the CLI never calls. In the bundle, undici's dispatcher lives in a private
//   object instead, so Node's fetch stays Node's if anything ever calls it, and the warm-up is left out.
// The edit names the exact text it replaces; when an undici update changes that text the build stops.
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'

/** How many times undici's lib/global.js names `globalThis` (two definitions and one read of the dispatcher). */
const GLOBAL_THIS_USES = 3

/** undici's lib/global.js with its dispatcher kept in a module-private object; throws when the text has changed. */
export function privateDispatcherSource(text) {
  const uses = text.split('globalThis').length - 1
  if (uses !== GLOBAL_THIS_USES || !text.includes('return globalThis[legacyGlobalDispatcher]')) {
    throw new Error(
      `scripts/undici-bundle.js: undici/lib/global.js names globalThis ${uses} times, not as expected ` +
        `(${GLOBAL_THIS_USES}, with "return globalThis[legacyGlobalDispatcher]")`,
    )
  }
  return `const __gpunetUndiciGlobals = {};\n${text.replaceAll('globalThis', '__gpunetUndiciGlobals')}`
}

/** The esbuild plugin: the entry, the private dispatcher, and no warm-up of Node's own fetch. */
export function undiciBundlePlugin(root) {
  return {
    name: 'undici-bundle',
    setup(build) {
      build.onResolve({filter: /^undici$/}, ({importer}) =>
        importer.startsWith(join(root, 'src')) ? {path: join(root, 'scripts/undici-entry.js')} : undefined,
      )
      build.onResolve({filter: /builtin-fetch-first\.js$/}, () => ({path: 'builtin-fetch-first', namespace: 'empty'}))
      build.onLoad({filter: /.*/, namespace: 'empty'}, () => ({contents: '', loader: 'js'}))
      build.onLoad({filter: /undici[\\/]lib[\\/]global\.js$/}, async (args) => ({
        contents: privateDispatcherSource(await readFile(args.path, 'utf8')),
        loader: 'js',
      }))
    },
  }
}
