/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against `gpunet mcp --http`, for the
 * scenarios that fit a server of its own tools: initialize, ping, tools/list, resources/list and DNS-rebinding
 * protection. (Its other scenarios call fixture tools and resources, `test_simple_text` or `test://static-text`,
 * that only its reference server has.) The suite needs Node 24: it runs in CI's Node 24 subset (.ci/run), and is
 * skipped on an older Node.
 */
import {strict as assert} from 'node:assert'
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {stripVTControlCharacters} from 'node:util'

import {BIN} from '../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../helpers/cli-localnet.js'

const SUITE = join(BIN, '..', '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']

describe('gpunet mcp --http against the MCP conformance suite (end to end, Node 24)', function () {
  this.timeout(120_000)
  let box: CliSandbox
  let server: ChildProcess
  let url: string

  before(async function () {
    if (Number(process.versions.node.split('.')[0]) < 24) this.skip() // the suite itself needs Node 24
    box = cliSandbox()
    server = spawn(process.execPath, [BIN, 'mcp', '--http', '0'], {env: {...process.env, ...box.env}})
    url = await new Promise<string>((resolve, reject) => {
      let stderr = ''
      server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk
        const found = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(stderr)
        if (found) resolve(found[0])
      })
      server.on('exit', (code) => reject(new Error(`gpunet mcp --http exited ${code}: ${stderr}`)))
    })
  })
  after(async () => {
    server?.kill('SIGTERM')
    await box?.cleanup()
  })

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, () => {
      const run = spawnSync(process.execPath, [SUITE, 'server', '--url', url, '--scenario', scenario], {
        encoding: 'utf8',
        env: {...process.env, NO_COLOR: '1'},
        timeout: 60_000,
      })
      const output = run.stdout + run.stderr
      assert.equal(run.status, 0, output)
      const passed = /Passed: (\d+)\/(\d+), 0 failed/.exec(stripVTControlCharacters(output))
      assert.ok(passed, output)
      assert.ok(Number(passed[1]) >= 1 && passed[1] === passed[2], output)
    })
  }
})
