/**
 * `npm run bench`: runs every bench/*.bench.ts in one process, one after another, each printing its figures
 * and the ratios it measures side by side. `npm run bench -- validate` runs only the files whose name matches.
 */
import {readdir} from 'node:fs/promises'
import {fileURLToPath} from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const filter = process.argv[2]
const files = (await readdir(here)).filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter))).sort()
for (const file of files) {
  const mod = (await import(new URL(file, import.meta.url).href)) as {default: () => Promise<void>}
  process.stdout.write(`\n## ${file.replace('.bench.ts', '')}\n`)
  await mod.default()
}
