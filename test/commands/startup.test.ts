import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

// @ts-expect-error -- a build script in plain JavaScript, without declarations
import {editOclifFile, OCLIF_EDITED_FILES} from '../../scripts/oclif-startup.js'
import {BIN, runCli} from '../helpers/cli.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const OCLIF_LIB = join(dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json')), 'lib')
const TEMPLATE = join(ROOT, 'job-templates/ollama-inference.json')

/** The source files (from the source maps) of every module of dist/ that one run of the CLI loads. */
async function sourcesLoadedBy(args: string[], expectedStatus = 0): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-loads-'))
  try {
    const log = join(dir, 'loads.txt')
    // A module hook that writes down every module URL Node loads, in the CLI's own process.
    const hooks = join(dir, 'hooks.mjs')
    await writeFile(
      hooks,
      `import {appendFileSync} from 'node:fs'\nexport async function load(url, context, next) {\n` +
        `  appendFileSync(${JSON.stringify(log)}, url + '\\n')\n  return next(url, context)\n}\n`,
    )
    const register = join(dir, 'register.mjs')
    await writeFile(
      register,
      `import {register} from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`,
    )
    const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], {
      encoding: 'utf8',
    })
    assert.equal(run.status, expectedStatus, run.stderr)
    const urls = (await readFile(log, 'utf8')).split('\n').filter((u) => u.startsWith('file:') && u.includes('/dist/'))
    return urls.flatMap((url) => {
      const map = JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as {sources: string[]}
      return map.sources
    })
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

describe('CLI start-up', () => {
  it('`job validate` on a valid file decides it without loading zod (or oclif’s unused semver)', async () => {
    const sources = await sourcesLoadedBy(['job', 'validate', TEMPLATE])
    assert.ok(
      sources.some((s) => s.includes('src/lib/definition/fast-path/generated.ts')),
      'the compiled check ran',
    )
    assert.deepEqual(
      sources.filter((s) => s.includes('/zod/') || s.includes('/semver/')),
      [],
    )
  })

  it('loads zod to explain an invalid file', async () => {
    const file = join(ROOT, 'test/fixtures/jobs-program-idl.json')
    const sources = await sourcesLoadedBy(['job', 'validate', file], 3)
    assert.ok(sources.some((s) => s.includes('/zod/v4/core/')))
    const r = await runCli(['job', 'validate', '-'], {stdin: '{"version": "0.1", "type": "container", "ops": {}}'})
    assert.equal(r.code, 3)
    assert.match(r.stdout, /ops {2}`ops` must be an array, got an object\n/)
  })

  it('renders help templates with oclif’s lazily loaded ejs', async () => {
    const r = await runCli(['job', 'validate', '--help'])
    assert.equal(r.code, 0)
    assert.match(r.stdout, /\$ gpunet job validate job\.json\n/)
  })

  it('edits each of oclif’s files it names, and stops the build when one has changed', async () => {
    for (const file of OCLIF_EDITED_FILES as string[]) {
      const text = await readFile(join(OCLIF_LIB, file), 'utf8')
      const edited = editOclifFile(file, text) as string
      assert.notEqual(edited, text, file)
      assert.doesNotMatch(edited, /\.sort\(\(a, b\) => a\.id\.localeCompare/)
      assert.throws(
        () => editOclifFile(file, text.replaceAll('require(', 'require (').replaceAll('localeCompare', 'compare')),
        new RegExp(`@oclif/core/lib/${file.replace('.', '\\.')} no longer contains`),
      )
    }
  })
})
