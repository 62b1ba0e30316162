/** `gpunet mcp`: a session over stdio, or over HTTP on loopback. */
import {StdioServerTransport} from '@modelcontextprotocol/sdk/server/stdio.js'

import type {ManifestCommand} from './catalog.js'
import {serveMcpHttp} from './http.js'
import {createMcpServer} from './server.js'
import {McpSession} from './session.js'

export {catalog, type ManifestCommand, type Tool} from './catalog.js'
export {McpSession} from './session.js'

/** The session-wide settings, given to every command as the variables the settings resolver reads. */
export interface SessionSettings {
  network: string
  profile?: string
  rpc?: string
  manager?: string
  wallet?: string
  apiKey?: string
}

/** The environment of the session's commands: the caller's, with the session's settings pinned. */
export function sessionEnv(env: NodeJS.ProcessEnv, settings: SessionSettings): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {...env, GPUNET_NETWORK: settings.network}
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) out[name] = value
  }
  set('GPUNET_PROFILE', settings.profile)
  set('GPUNET_RPC_URL', settings.rpc)
  set('GPUNET_MANAGER_URL', settings.manager)
  set('GPUNET_WALLET', settings.wallet)
  set('GPUNET_API_KEY', settings.apiKey)
  // A command's human output is never read: no colors, no spinners.
  out.NO_COLOR = '1'
  delete out.FORCE_COLOR
  return out
}

export interface StartOptions {
  commands: readonly ManifestCommand[]
  network: string
  env: NodeJS.ProcessEnv
  maxSpend?: number
  maxCredits?: number
  secrets: readonly string[]
  http?: number
  allowedOrigins?: readonly string[]
  note: (line: string) => void
}

/** Serves a session until its client leaves (stdio: standard input ends) or, over HTTP, until a signal. */
export async function startMcp(options: StartOptions): Promise<void> {
  const session = new McpSession(options)
  if (options.http !== undefined) {
    const {server, url} = await serveMcpHttp(session, options.http, {allowedOrigins: options.allowedOrigins})
    options.note(`gpunet mcp on ${options.network}: ${url}`)
    await new Promise<void>((resolve) => {
      const stop = () => {
        server.close(() => resolve())
        server.closeAllConnections() // idle keep-alive sockets would hold close() open
      }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    return
  }
  const server = createMcpServer(session)
  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve()
    process.stdin.once('end', () => void server.close())
  })
  await server.connect(transport)
  await closed
}
