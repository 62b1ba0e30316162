import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {validateFiles, type ValidateFilesOptions} from '../../../src/lib/definition/validate-files.js'

const definition = (cmd: string[]) =>
  JSON.stringify({
    version: '0.1',
    type: 'container',
    ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu', cmd}}],
  })

const options = (extra: Partial<ValidateFilesOptions> = {}): ValidateFilesOptions => ({
  strict: false,
  frames: false,
  paint: (_style, text) => text,
  readStdin: () => Promise.reject(new Error('no standard input in this test')),
  ...extra,
})

describe('job validate over several files (validateFiles)', () => {
  let dir: string
  let good: string
  let warned: string
  let bad: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-validate-files-'))
    good = join(dir, 'good.json')
    warned = join(dir, 'warned.json')
    bad = join(dir, 'bad.json')
    await writeFile(good, definition(['echo', 'hi']))
    await writeFile(warned, definition(['echo', '%%secret.X%%']))
    await writeFile(bad, JSON.stringify({version: '0.1', type: 'container', ops: []}))
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('every file valid: exit 0, one report per file in the order given', async () => {
    const {document, exitCode} = await validateFiles([good, warned], options())
    assert.equal(exitCode, 0)
    assert.equal(document.valid, true)
    assert.deepEqual(
      document.files.map((f) => [f.file, f.valid]),
      [
        [good, true],
        [warned, true],
      ],
    )
  })

  it('one invalid file among valid ones: the whole run is invalid, exit 3, and every file is still reported', async () => {
    const {document, exitCode} = await validateFiles([good, bad, warned], options())
    assert.equal(exitCode, 3)
    assert.equal(document.valid, false)
    assert.deepEqual(
      document.files.map((f) => [f.file, f.valid]),
      [
        [good, true],
        [bad, false],
        [warned, true],
      ],
    )
  })

  it('--strict reaches each file: a warning alone makes the run invalid', async () => {
    const {document, exitCode} = await validateFiles([good, warned], options({strict: true}))
    assert.equal(exitCode, 3)
    assert.deepEqual(
      document.files.map((f) => f.valid),
      [true, false],
    )
  })

  it('--network reaches each file: the network’s verdict is in its report', async () => {
    const {document} = await validateFiles([good], options({network: 'devnet'}))
    assert.equal(document.files[0]?.network?.name, 'devnet')
    assert.equal(document.files[0]?.network?.accepted, true)
  })

  it('writes the human report file by file, and nothing without a writer (--json)', async () => {
    const lines: string[] = []
    await validateFiles([good, bad], options({say: (line) => lines.push(line)}))
    const goodAt = lines.findIndex((l) => l.includes('good.json'))
    const badAt = lines.findIndex((l) => l.includes('bad.json'))
    assert.ok(goodAt >= 0 && badAt > goodAt, lines.join('\n'))
    const {document} = await validateFiles([good], options())
    assert.equal(document.files.length, 1)
  })
})
