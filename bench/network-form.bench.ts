/**
 * The network check `job post` runs before paying (issue 18's budget: at most 15 ms of wall time): the translation to
 * the network's form and the bundled @nosana/types validator on the bytes to upload. Measured side by side in one
 * run: the spec check alone (what `job post` did before) and the spec check with the network's, on every template;
 * and, first, the one-off cost of loading the network check (its module and the bundled validator) in this process.
 */
import {spawnSync} from 'node:child_process'
import {readFile} from 'node:fs/promises'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {checkDefinitionText} from '../src/lib/definition/check.js'
import {listTemplates} from '../src/lib/definition/templates.js'

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Wall milliseconds of each call, interleaving the two sides so a busy moment of the machine hits both. */
async function sideBySide(texts: [string, string][], rounds: number): Promise<{spec: number[]; network: number[]}> {
  const spec: number[] = []
  const network: number[] = []
  for (let r = 0; r < rounds; r++) {
    for (const [file, text] of texts) {
      let start = performance.now()
      await checkDefinitionText(text, file)
      spec.push(performance.now() - start)
      start = performance.now()
      await checkDefinitionText(text, file, {network: 'mainnet'})
      network.push(performance.now() - start)
    }
  }
  return {spec, network}
}

const CHECK = fileURLToPath(new URL('../dist/lib/definition/check.js', import.meta.url))

/** Milliseconds of the first `checkDefinitionText(…, {network})` in a new Node process, after a spec-only check. */
function coldNetworkCheck(file: string): number {
  const script = `
    const {readFileSync} = await import('node:fs')
    const {checkDefinitionText} = await import(${JSON.stringify(pathToFileURL(CHECK).href)})
    const text = readFileSync(${JSON.stringify(file)}, 'utf8')
    await checkDefinitionText(text, 'job.json')
    const start = performance.now()
    const {report} = await checkDefinitionText(text, 'job.json', {network: 'mainnet'})
    if (!report.valid) throw new Error('refused')
    console.log(performance.now() - start)`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {encoding: 'utf8'})
  if (child.status !== 0) throw new Error(child.stderr)
  return Number(child.stdout.trim())
}

export default async function bench(): Promise<void> {
  const templates = await listTemplates()
  const texts: [string, string][] = await Promise.all(
    templates.map(async (t): Promise<[string, string]> => [t.file, await readFile(t.file, 'utf8')]),
  )
  // The first check in a fresh process, from the build (`npm run bench` builds first), as a command runs it: the
  // spec check's modules are loaded before the clock starts, then the network check loads its own.
  const colds: number[] = []
  for (let i = 0; i < 7; i++) colds.push(coldNetworkCheck(texts[i % texts.length]![0]))
  const cold = median(colds)
  console.log(
    `first network check in a fresh process (loads the translation and the bundled validator): ${cold.toFixed(2)} ms median of 7`,
  )

  await sideBySide(texts, 20) // warm-up
  const {spec, network} = await sideBySide(texts, 200)
  const extra = network.map((n, i) => n - spec[i]!)
  console.log(`per template (${texts.length}), median of 200 rounds, wall time:`)
  console.log(`  spec check alone         ${median(spec).toFixed(3)} ms`)
  console.log(
    `  spec + network check     ${median(network).toFixed(3)} ms  (${(median(network) / median(spec)).toFixed(2)}x)`,
  )
  console.log(
    `  the network check's cost ${median(extra).toFixed(3)} ms median, p99 ${extra.sort((a, b) => a - b)[Math.floor(extra.length * 0.99)]!.toFixed(3)} ms`,
  )
  const worst = Math.max(cold, median(extra))
  console.log(
    `target: at most 15 ms of wall time for the check: ${worst <= 15 ? 'met' : 'MISSED'} (${worst.toFixed(2)} ms at worst, first call included)`,
  )
}
