/**
 * The MCP server of a session on the protocol's official SDK (its low-level `Server`: the tools are data from the
 * manifest, not handlers written one by one): tools/list and tools/call from the session, and the resources an
 * agent reads (the job definition schema, the templates, a job's result and logs).
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Server} from '@modelcontextprotocol/sdk/server/index.js'
import {
  type CallToolRequest,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import {literal, looseObject, unknown} from 'zod'

import {BadArguments} from './arguments.js'
import {type McpSession} from './session.js'
import {installedPackage} from '../package-root.js'

/**
 * tools/call as the SDK's router sees it: any params. The SDK's server checks them against its own CallToolRequest
 * schema next, answering -32602 when they do not fit; the router's own check, with the full schema, would answer a
 * malformed call with -32603 (internal error).
 */
const ToolsCall = looseObject({method: literal('tools/call'), params: unknown()})

const SCHEMA_URI = 'gpunet://schema/job-definition'
const TEMPLATE_PREFIX = 'gpunet://templates/'
const JOB_URI = /^gpunet:\/\/jobs\/([1-9A-HJ-NP-Za-km-z]{32,44})\/(result|logs)$/

/** The templates shipped with gpunet (`job-templates/*.json`), by name. */
function templates(): string[] {
  return readdirSync(join(installedPackage().root, 'job-templates'))
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort()
}

/** A new SDK server over a session (one per connection; the session, its quotes and caps, are shared). */
export function createMcpServer(session: McpSession): Server {
  const {manifest, root} = installedPackage()
  const server = new Server(
    {name: 'gpunet', version: manifest.version},
    {
      capabilities: {tools: {}, resources: {}},
      instructions: `gpunet on ${session.network}: every command a tool (its --json document the result). Calls that pay or destroy answer a quote first; call again with its id to act.`,
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: session.tools.map(({name, title, description, inputSchema, annotations}) => ({
      name,
      title,
      description,
      inputSchema,
      annotations,
    })),
  }))

  server.setRequestHandler(ToolsCall, async (loose, extra) => {
    const request = loose as unknown as CallToolRequest
    try {
      const {document, isError} = await session.call(request.params.name, request.params.arguments, extra.signal)
      return {content: [{type: 'text', text: JSON.stringify(document, null, 2)}], structuredContent: document, isError}
    } catch (error) {
      if (error instanceof BadArguments) throw new McpError(ErrorCode.InvalidParams, error.message)
      throw new McpError(ErrorCode.InternalError, 'the call failed before its command ran')
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: SCHEMA_URI,
        name: 'job-definition-schema',
        title: 'The job definition schema (JSON Schema, draft 2020-12)',
        mimeType: 'application/schema+json',
      },
      ...templates().map((name) => ({
        uri: `${TEMPLATE_PREFIX}${name}`,
        name: `template-${name}`,
        title: `Job definition template: ${name}`,
        mimeType: 'application/json',
      })),
    ],
  }))

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'gpunet://jobs/{address}/result',
        name: 'job-result',
        title: "A job's state and result (gpunet job get --json)",
        mimeType: 'application/json',
      },
      {
        uriTemplate: 'gpunet://jobs/{address}/logs',
        name: 'job-logs',
        title: "A job's output lines (gpunet job logs --json)",
        mimeType: 'application/json',
      },
    ],
  }))

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const {uri} = request.params
    if (uri === SCHEMA_URI) {
      const text = readFileSync(join(root, 'schema', 'job-definition.schema.json'), 'utf8')
      return {contents: [{uri, mimeType: 'application/schema+json', text}]}
    }
    if (uri.startsWith(TEMPLATE_PREFIX)) {
      const name = uri.slice(TEMPLATE_PREFIX.length)
      if (!templates().includes(name)) throw new McpError(-32002, `no template ${JSON.stringify(name.slice(0, 100))}`)
      const text = readFileSync(join(root, 'job-templates', `${name}.json`), 'utf8')
      return {contents: [{uri, mimeType: 'application/json', text}]}
    }
    const job = JOB_URI.exec(uri)
    if (!job) throw new McpError(-32002, `no resource ${JSON.stringify(uri.slice(0, 200))}`)
    const tool = job[2] === 'result' ? 'job_get' : 'job_logs'
    const {document} = await session.call(tool, {job: job[1]}, extra.signal)
    return {contents: [{uri, mimeType: 'application/json', text: JSON.stringify(document, null, 2)}]}
  })
  return server
}
