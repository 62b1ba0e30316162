/** Free ports for servers a test starts in another process, which cannot be handed port 0. */
import {once} from 'node:events'
import {createServer} from 'node:net'

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const {port} = server.address() as {port: number}
  server.close()
  await once(server, 'close')
  return port
}
