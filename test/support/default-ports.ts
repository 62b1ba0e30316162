/**
 * The localnet's default ports (JSON-RPC 28899, its WebSocket 28900, the gateway 28980 and its https 28981) are held by the test run's
 * parent process while it runs: tests in parallel workers must each take free ports, and a test that falls back to
 * a default now fails at once (address in use) instead of now and then colliding with another worker.
 */
import {once} from 'node:events'
import {createServer, type Server} from 'node:net'

import {defaultGatewayHttpsPort, defaultGatewayPort} from '../../src/lib/localnet/paths.js'
import {DEFAULT_PORT} from '../../src/lib/settings/presets.js'

const PORTS = [
  DEFAULT_PORT,
  DEFAULT_PORT + 1,
  defaultGatewayPort(DEFAULT_PORT),
  defaultGatewayHttpsPort(defaultGatewayPort(DEFAULT_PORT)),
]

const held: Server[] = []

/** Listens on each default port it can; one already taken (a developer's own localnet) is left alone, with a notice. */
export async function holdDefaultPorts(): Promise<void> {
  for (const port of PORTS) {
    const server = createServer((socket) => socket.destroy())
    server.listen(port, '127.0.0.1')
    try {
      await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error))])
      server.unref()
      held.push(server)
    } catch {
      process.stderr.write(`\n  note: port ${port} is in use here; the tests never use it\n`)
    }
  }
}

/** Lets the default ports go. */
export async function releaseDefaultPorts(): Promise<void> {
  await Promise.all(held.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
}
