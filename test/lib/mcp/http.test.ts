/**
 * `gpunet mcp --http` in this process (127.0.0.1, port 0; the commands answered by a stand-in, no process): the
 * SDK's own HTTP client lists the tools and calls one; the loopback guard refuses a rebound Host and a web page's
 * Origin before the MCP server sees the request; a body over the limit is refused.
 */
import {strict as assert} from 'node:assert'
import {request, type Server} from 'node:http'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'

import {serveMcpHttp} from '../../../src/lib/mcp/http.js'
import type {CommandOutput, RunOptions} from '../../../src/lib/mcp/run-command.js'
import {McpSession} from '../../../src/lib/mcp/session.js'
import {manifestCommands} from '../../helpers/manifest.js'

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 't', version: '1'}},
})

describe('gpunet mcp --http', function () {
  this.timeout(60_000)
  let server: Server
  let url: string
  const runs: string[][] = []

  before(async () => {
    const run = async ({words}: RunOptions): Promise<CommandOutput> => {
      runs.push(words)
      return {exitCode: 0, document: {valid: true, files: []}}
    }
    const session = new McpSession({commands: await manifestCommands(), network: 'localnet', env: {}, run})
    ;({server, url} = await serveMcpHttp(session, 0))
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const post = (headers: Record<string, string>, body = initialize) =>
    fetch(url, {
      method: 'POST',
      headers: {'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers},
      body,
    })

  it('serves the tools to the SDK client over Streamable HTTP', async () => {
    const client = new Client({name: 'http-test', version: '1.0.0'})
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    const {tools} = await client.listTools()
    assert.ok(tools.some((tool) => tool.name === 'job_validate'))
    const result = await client.callTool({name: 'job_validate', arguments: {file: 'job.json'}})
    assert.deepEqual(result.structuredContent, {valid: true, files: []})
    assert.deepEqual(runs.at(-1), ['job', 'validate', 'job.json'])
    await client.ping()
    await client.close()
  })

  it('answers a loopback request, with its own origin or none', async () => {
    const {host} = new URL(url)
    assert.equal((await post({})).status, 200)
    assert.equal((await post({origin: `http://${host}`})).status, 200)
  })

  it('refuses a rebound host name and a web page’s origin, as every loopback service does', async () => {
    // fetch does not let a page (or a test) set Host; node:http does.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {host: 'evil.example.com', 'content-type': 'application/json'},
      })
      req.on('response', (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end(initialize)
    })
    assert.equal(status, 403)
    const page = await post({origin: 'http://evil.example.com'})
    assert.equal(page.status, 403)
    assert.match(JSON.stringify(await page.json()), /web page at \\"http:\/\/evil\.example\.com\\" are refused/)
  })

  it('answers a malformed tools/call (arguments not an object, no name) with -32602, not an internal error', async () => {
    for (const params of [{name: 'job_get', arguments: 'nope'}, {arguments: {}}]) {
      const answer = await post({}, JSON.stringify({jsonrpc: '2.0', id: 7, method: 'tools/call', params}))
      const text = await answer.text()
      assert.match(text, /"code":-32602/, text)
      assert.doesNotMatch(text, /\bat \S+ \(/, 'no stack trace')
    }
  })

  it('refuses a body over the 1 MiB a call may carry, and other paths and methods', async () => {
    assert.equal((await post({}, JSON.stringify({pad: 'x'.repeat(1024 * 1024 + 70_000)}))).status, 413)
    assert.equal((await fetch(url.replace('/mcp', '/other'), {method: 'POST', body: '{}'})).status, 404)
    assert.equal((await fetch(url)).status, 405)
  })
})
