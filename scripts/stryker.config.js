// StrykerJS for `npm run mutation -- <area or file>...` (mutation.js picks the files to mutate and the
// test files that cover them, see docs/development.md "Mutation testing"). Not part of CI.
import {mutationTargets, runName} from './mutation-areas.js'

const targets = JSON.parse(process.env.GPUNET_MUTATION_TARGETS ?? '[]')
const {mutate, spec} = mutationTargets(targets)
// One folder and report per run, so runs on different areas may go side by side.
const run = runName(targets)

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'mocha',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: {prioritizePerformanceOverAccuracy: true},
  mochaOptions: {config: '.mocharc.json', spec},
  // The mocha runner loads the tests in Stryker's own worker: the TypeScript loader and the console filter that
  // .mocharc.json preloads (as node-option) must come from Node's arguments instead.
  testRunnerNodeArgs: [
    '--import',
    'tsx',
    '--import',
    './src/cli/console-filter.ts',
    '--no-warnings=ExperimentalWarning',
  ],
  mutate,
  // Stryker would otherwise put `// @ts-nocheck` atop every file of its sandbox and blank the ones already there,
  // and the test that the fast path's generated.ts is current compares that file's text (tsx checks no types).
  disableTypeChecks: false,
  coverageAnalysis: 'perTest',
  // Two cores, shared: one or two workers. A mutant's timeout is 3x its tests' time plus 10 s: room for a loaded
  // machine, while each mutant that loops forever (a retry or a wait made endless) costs a whole timeout.
  concurrency: Number(process.env.GPUNET_MUTATION_CONCURRENCY ?? 2),
  timeoutMS: 10_000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: {fileName: `reports/mutation/${run}.json`},
  // mutation.js runs Stryker with --incremental: each run starts from the results of the area's last one.
  incrementalFile: `reports/mutation/${run}.incremental.json`,
  clearTextReporter: {allowColor: false, logTests: false, maxTestsToLog: 0},
  tempDirName: `.stryker-tmp/${run}`,
  cleanTempDir: 'always',
  ignorePatterns: ['dist', 'reports', '.gpunet-test', '.stryker-tmp'],
}
