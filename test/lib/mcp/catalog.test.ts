/**
 * The tools are the commands: every command of src/commands is a tool or excluded with the reason kept on its
 * class, no tool takes a session-wide flag, and every command that pays or destroys needs a quote. The commands'
 * manifest entries are made by oclif's own `cacheCommand`, the function `oclif manifest` writes
 * oclif.manifest.json with (the build is not a unit test's), from the source classes.
 */
import {strict as assert} from 'node:assert'

import {catalog, type ManifestCommand, needsQuote, SESSION_FLAGS} from '../../../src/lib/mcp/catalog.js'
import {prepareCall} from '../../../src/lib/mcp/arguments.js'
import {manifestCommands} from '../../helpers/manifest.js'

describe('gpunet mcp tools', function () {
  this.timeout(60_000)
  let commands: ManifestCommand[]
  before(async () => {
    commands = await manifestCommands()
  })

  it('makes every command a tool, or excludes it with the reason kept on its class', () => {
    const {tools, excluded} = catalog(commands)
    const ids = commands.filter((command) => !command.hidden).map((command) => command.id)
    const covered = [...tools.map((tool) => tool.command.id), ...excluded.map((exclusion) => exclusion.command)]
    assert.deepEqual([...covered].sort(), [...ids].sort())
    assert.equal(new Set(covered).size, covered.length, 'a command is a tool or excluded, not both')
    for (const {command, reason} of excluded) assert.ok(reason.length >= 10, `${command}: say why it is not a tool`)
    assert.ok(tools.length >= 35, `${tools.length} tools`)
  })

  it('excludes the interactive commands, the servers that never return and those that print or take a secret', () => {
    const {excluded} = catalog(commands)
    const left = excluded.map((exclusion) => exclusion.command)
    for (const id of [
      'job:shell',
      'localnet:start',
      'secrets:serve',
      'deployment:serve',
      'secrets:get',
      'secrets:set',
      'deployment:api-key:create',
      'wallet:import',
      'config:set',
      'mcp',
    ]) {
      assert.ok(left.includes(id), `${id} is a tool`)
    }
  })

  it('takes no session-wide flag, no --json and no --yes as a tool argument', () => {
    for (const tool of catalog(commands).tools) {
      for (const name of Object.keys(tool.inputSchema.properties)) {
        assert.ok(!SESSION_FLAGS.has(name), `${tool.name} takes --${name}`)
        assert.ok(!['json', 'yes', 'follow'].includes(name), `${tool.name} takes --${name}`)
      }
      assert.equal(tool.inputSchema.additionalProperties, false)
    }
  })

  it('needs a quote for every command marked as paying or destroying, and for the ones the issue names', () => {
    const {tools} = catalog(commands)
    const marked = commands.filter((command) => command.paysOrDestroys && !command.mcp?.exclude)
    assert.ok(marked.length >= 16, `${marked.length} marked`)
    for (const command of marked) {
      const tool = tools.find((one) => one.command.id === command.id)!
      const when = command.paysOrDestroys!.whenFlag
      assert.ok(needsQuote(tool, when ? {[when]: true} : {}), `${command.id} acts without a quote`)
      assert.ok('quote' in tool.inputSchema.properties, `${tool.name} takes no quote`)
      if (when) assert.ok(!needsQuote(tool, {}), `${command.id} needs a quote without --${when}`)
    }
    for (const id of [
      'job:post',
      'job:run',
      'job:extend',
      'job:stop',
      'deployment:create',
      'deployment:start',
      'deployment:scale',
      'deployment:revise',
      'deployment:fund',
      'deployment:withdraw',
      'deployment:stop',
      'deployment:delete',
      'deployment:api-key:revoke',
      'localnet:stop',
      'localnet:reset',
      'secrets:delete',
    ]) {
      assert.ok(
        marked.some((command) => command.id === id),
        `${id} is not marked as paying or destroying`,
      )
    }
    for (const tool of tools.filter((one) => one.quoted === null)) {
      assert.ok(!('quote' in tool.inputSchema.properties), `${tool.name} takes a quote it never needs`)
    }
  })

  it('turns the following commands into bounded reads', () => {
    const {tools} = catalog(commands)
    const following = tools.filter((tool) => tool.follows).map((tool) => tool.name)
    assert.deepEqual(following.sort(), ['deployment_events', 'deployment_logs', 'job_logs', 'job_stats'])
    const logs = tools.find((tool) => tool.name === 'job_logs')!
    assert.ok('maxLines' in logs.inputSchema.properties && 'maxSeconds' in logs.inputSchema.properties)
    const call = prepareCall(logs, {job: 'Fx2mVXJrM1kq4RkWrcEbkEbHYpyBNFSnnD4Bq2eSqfGm', maxLines: 5})
    assert.deepEqual(call.words, ['job', 'logs', 'Fx2mVXJrM1kq4RkWrcEbkEbHYpyBNFSnnD4Bq2eSqfGm', '--follow'])
    assert.deepEqual(call.follow, {maxLines: 5, maxSeconds: 30})
    assert.equal(prepareCall(logs, {job: 'Fx2mVXJrM1kq4RkWrcEbkEbHYpyBNFSnnD4Bq2eSqfGm'}).follow, null)
  })

  it('names each tool after its command, with its summary and examples', () => {
    const post = catalog(commands).tools.find((tool) => tool.name === 'job_post')!
    assert.equal(post.title, 'gpunet job post')
    assert.match(post.description, /^Post a job to a market/)
    assert.match(post.description, /gpunet job post --file job\.json --timeout 10m --wait/)
    assert.match(post.description, /answers a quote/)
    assert.deepEqual(post.inputSchema.properties.timeout, {
      type: 'string',
      description: post.command.flags!.timeout!.description,
    })
  })
})
