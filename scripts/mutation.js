// `npm run mutation -- [--full] <area or src file>...`: runs StrykerJS on those files with the tests that cover
// them (scripts/mutation-areas.js, scripts/stryker.config.js). With no argument, lists the areas.
// Runs are incremental: only the mutants whose code or covering tests changed since the area's last run are
// tested again (reports/mutation/<area>.incremental.json); --full tests every mutant again.
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {AREAS, mutationTargets, runName} from './mutation-areas.js'

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
forgetStaticSurvivors(targets)
// The package's exports do not include its command; the link npm installs does.
const stryker = fileURLToPath(new URL('../node_modules/.bin/stryker', import.meta.url))
const args = [stryker, 'run', 'scripts/stryker.config.js', '--incremental', ...(full ? ['--force'] : [])]
const run = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: {...process.env, GPUNET_MUTATION_TARGETS: JSON.stringify(targets)},
})
process.exit(run.status ?? 1)

/**
 * Drops from the area's incremental file the static mutants (those that act when a module loads) that no test
 * killed. Stryker records no covering test for a static mutant, so it would reuse such a result forever, even after
 * new tests that kill it; dropped, they are tested again.
 */
function forgetStaticSurvivors(targets) {
  const file = fileURLToPath(new URL(`../reports/mutation/${runName(targets)}.incremental.json`, import.meta.url))
  if (!existsSync(file)) return
  const report = JSON.parse(readFileSync(file, 'utf8'))
  let dropped = 0
  for (const entry of Object.values(report.files)) {
    const kept = entry.mutants.filter((m) => !(m.static && (m.status === 'Survived' || m.status === 'NoCoverage')))
    dropped += entry.mutants.length - kept.length
    entry.mutants = kept
  }
  if (dropped === 0) return
  writeFileSync(file, JSON.stringify(report))
  process.stderr.write(`testing again ${dropped} static mutant(s) that survived the last run\n`)
}
