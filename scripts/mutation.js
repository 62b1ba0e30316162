// `npm run mutation -- [--full] <area or src file>...`: runs StrykerJS on those files with the tests that cover
// them (scripts/mutation-areas.js, scripts/stryker.config.js). With no argument, lists the areas.
// Runs are incremental: only the mutants whose code or covering tests changed since the area's last run are
// tested again (reports/mutation/<area>.incremental.json); --full tests every mutant again.
import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

import {AREAS, mutationTargets} from './mutation-areas.js'

const full = process.argv.includes('--full')
const targets = process.argv.slice(2).filter((arg) => arg !== '--full')
if (targets.length === 0) {
  process.stderr.write(
    `usage: npm run mutation -- [--full] <area or src file>...\nareas: ${Object.keys(AREAS).join(', ')}\n`,
  )
  process.exit(2)
}
try {
  mutationTargets(targets)
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(2)
}
// The package's exports do not include its command; the link npm installs does.
const stryker = fileURLToPath(new URL('../node_modules/.bin/stryker', import.meta.url))
const args = [stryker, 'run', 'scripts/stryker.config.js', '--incremental', ...(full ? ['--force'] : [])]
const run = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: {...process.env, GPUNET_MUTATION_TARGETS: JSON.stringify(targets)},
})
process.exit(run.status ?? 1)
