import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

// @ts-expect-error -- a build script in plain JavaScript, without declarations
import {editOclifFile, OCLIF_EDITED_FILES} from '../../scripts/oclif-startup.js'
import {BIN, runCli} from '../helpers/cli.js'
import {moduleLoadLog} from '../helpers/module-log.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const OCLIF_LIB = join(dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json')), 'lib')
const TEMPLATE = join(ROOT, 'job-templates/ollama-inference.json')

/** The source files (from the source maps) of every module of dist/ that one run of the CLI loads. */
async function sourcesLoadedBy(args: string[], expectedStatus = 0): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-loads-'))
  try {
    // A module hook that writes down every module URL Node loads, in the CLI's own process.
    const modules = moduleLoadLog(dir)
    const run = spawnSync(process.execPath, [...modules.importArgs, BIN, ...args], {encoding: 'utf8'})
    assert.equal(run.status, expectedStatus, run.stderr)
    const urls = modules.loaded().filter((u) => u.startsWith('file:') && u.includes('/dist/'))
    const sources = urls.flatMap((url) => {
      const map = JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as {sources: string[]}
      return map.sources
    })
    // Node 20 runs oclif and the commands from one CommonJS bundle, whole (src/cli/code-cache.ts).
    if (!sources.some((s) => s.endsWith('src/cli/code-cache.ts'))) return sources
    const bundle = readdirSync(join(ROOT, 'dist/node20')).find((f) => /^gpunet-[0-9a-f]+\.cjs$/.test(f))!
    const map = JSON.parse(readFileSync(join(ROOT, 'dist/node20', `${bundle}.map`), 'utf8')) as {sources: string[]}
    return [...sources, ...map.sources]
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

describe('CLI start-up', () => {
  describe('plain `job validate` and `--version`, served before oclif loads', () => {
    let dir: string
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'gpunet-fast-start-'))
      await writeFile(join(dir, 'bad.json'), '{"version": "0.1", "type": "container", "ops": [{"id": 1}]}\n')
      await writeFile(
        join(dir, 'warn.json'),
        readFileSync(join(ROOT, 'job-templates/hello-world.json'), 'utf8').replace(
          '"image"',
          '"env": {"API_TOKEN": "hunter2hunter2"}, "image"',
        ),
      )
      await writeFile(join(dir, 'binary.json'), Buffer.from([0x7b, 0, 0xff]))
    })
    after(() => rm(dir, {recursive: true, force: true}))

    const cases: {args: (dir: string) => string[]; stdin?: string}[] = [
      {args: () => [TEMPLATE]},
      {args: (d) => [TEMPLATE, join(d, 'bad.json'), join(d, 'missing.json'), join(d, 'binary.json')]},
      {args: (d) => ['--json', join(d, 'bad.json'), TEMPLATE]},
      {args: (d) => [join(d, 'warn.json'), '--strict']},
      {args: (d) => [join(d, 'warn.json'), '--strict', '--json']},
      {args: (d) => ['--no-frames', join(d, 'bad.json')]},
      {args: () => ['-', '--frames'], stdin: '{"version": "0.1",\n "type": "vm", "ops": []}'},
      {args: () => ['--json', '-'], stdin: 'version: "0.1"\ntype: container\nops: []\n'},
    ]
    for (const {args, stdin} of cases) {
      it(`answers \`job validate ${args('DIR').join(' ')}\` exactly as oclif does`, async () => {
        const fast = await runCli(['job', 'validate', ...args(dir)], {stdin})
        // oclif serves the colon form of the same command; the start-up path does not take it.
        const oclif = await runCli(['job:validate', ...args(dir)], {stdin})
        assert.deepEqual(fast, oclif)
        assert.notEqual(fast.stdout, '')
      })
    }

    it('leaves to oclif what it does not fully know, which then parses and errs as usual', async () => {
      const unknown = await runCli(['job', 'validate', '--bogus', TEMPLATE])
      assert.equal(unknown.code, 2)
      assert.match(unknown.stderr, /^Error: unknown flag --bogus$/m)
      const none = await runCli(['job', 'validate'])
      assert.equal(none.code, 2)
      assert.match(none.stderr, /^Error: missing FILE/m)
      const help = await runCli(['job', 'validate', TEMPLATE, '--help'])
      assert.match(help.stdout, /^USAGE\n/m)
    })

    it('--version and --version --json', async () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {name: string; version: string}
      const text = await runCli(['--version'])
      assert.equal(
        text.stdout,
        `${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`,
      )
      const json = await runCli(['--version', '--json'])
      assert.deepEqual(JSON.parse(json.stdout), {
        name: pkg.name,
        version: pkg.version,
        node: process.version,
        platform: process.platform,
        arch: process.arch,
      })
    })
  })

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

  it('`job exec` starts without oclif, web3.js or zod: its Node 20 bundle, and the ES modules it imports', () => {
    const heavy = (source: string) => /\/(@oclif|@solana\/web3\.js|zod)\//.test(source)
    const node20 = join(ROOT, 'dist/node20')
    const bundle = readdirSync(node20).find((f) => /^exec-[0-9a-f]+\.cjs$/.test(f))!
    const map = JSON.parse(readFileSync(join(node20, `${bundle}.map`), 'utf8')) as {sources: string[]}
    assert.ok(map.sources.some((s) => s.endsWith('src/cli/fast-exec.ts')))
    assert.ok(
      map.sources.some((s) => s.endsWith('src/lib/job/exec.ts')),
      'the command’s own exec code',
    )
    assert.deepEqual(map.sources.filter(heavy), [])
    // Node 22+: the module src/cli/fast-start.ts imports, and every module it imports statically (never a lazy import()).
    const chunks = join(ROOT, 'dist/chunks')
    const entry = readdirSync(chunks).find((f) => /^fast-exec-\w+\.js$/.test(f))!
    const seen = new Set<string>()
    const sources: string[] = []
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const code = readFileSync(join(chunks, file), 'utf8')
      sources.push(...(JSON.parse(readFileSync(join(chunks, `${file}.map`), 'utf8')) as {sources: string[]}).sources)
      for (const [, next] of code.matchAll(/import\s*(?:[\w$*{}\s,]+from\s*)?["']\.\/([^"']+)["']/g)) visit(next!)
    }
    visit(entry)
    assert.ok(
      sources.some((s) => s.endsWith('src/lib/job/exec.ts')),
      sources.join(', '),
    )
    assert.deepEqual(sources.filter(heavy), [])
  })

  it('starts oclif without its WSL probe (wsl-utils and the container checks it imports)', async () => {
    const sources = await sourcesLoadedBy(['job:validate', TEMPLATE])
    assert.ok(
      sources.some((s) => s.includes('/@oclif/core/lib/config/config.js')),
      'oclif started',
    )
    if (!sources.some((s) => s.endsWith('src/cli/code-cache.ts'))) {
      assert.deepEqual(
        sources.filter((s) => /\/(wsl-utils|is-wsl|is-docker|is-inside-container)\//.test(s)),
        [],
      )
    }
    // The probes themselves, which Node 20's bundle carries (oclif's shell lookup may need them on Windows).
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-probes-'))
    try {
      const log = join(dir, 'probes.txt')
      const preload = join(dir, 'probes.cjs')
      await writeFile(
        preload,
        `const fs = require('node:fs')\nfor (const name of ['readFileSync', 'statSync', 'existsSync', 'accessSync']) {\n` +
          `  const original = fs[name]\n  fs[name] = function (path, ...rest) {\n` +
          `    if (/proc\\/version|dockerenv|containerenv|cgroup/.test(String(path))) ` +
          `fs.appendFileSync(${JSON.stringify(log)}, name + ' ' + path + '\\n')\n` +
          `    return original.call(this, path, ...rest)\n  }\n}\n`,
      )
      const run = spawnSync(process.execPath, ['--require', preload, BIN, 'job:validate', TEMPLATE], {encoding: 'utf8'})
      assert.equal(run.status, 0, run.stderr)
      assert.equal(readFileSync(log, {encoding: 'utf8', flag: 'a+'}), '')
    } finally {
      await rm(dir, {recursive: true, force: true})
    }
  })

  it('loads zod to explain an invalid file', async () => {
    const file = join(ROOT, 'src/lib/localnet/jobs-program/idl.json')
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
        () =>
          editOclifFile(
            file,
            text
              .replaceAll('require(', 'require (')
              .replaceAll('pathToFileURL', 'toFileURL')

              .replaceAll('localeCompare', 'compare'),
          ),
        new RegExp(`@oclif/core/lib/${file.replace('.', '\\.')} no longer contains`),
      )
    }
  })
})
