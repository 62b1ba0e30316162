/** A port that never accepts a connection, held by a child process (so end-to-end only). */
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {connect, type Socket} from 'node:net'

/**
 * A port on 127.0.0.1 where a connection never opens: a listener with a backlog of one in a process whose event
 * loop is blocked, with its accept queue filled, so the kernel leaves further handshakes unanswered.
 */
export async function startUnacceptingPort(): Promise<{port: number; close(): void}> {
  const script = `
    const server = require('node:net').createServer()
    server.listen({port: 0, host: '127.0.0.1', backlog: 1}, () => {
      process.stdout.write(server.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0))
    })`
  const child = spawn(process.execPath, ['-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
  const [data] = (await once(child.stdout, 'data')) as [Buffer]
  const port = Number(String(data).trim())
  const fillers: Socket[] = []
  // The queue holds backlog + 1 handshakes; one more that stays pending shows it is full.
  for (;;) {
    const socket = connect({port, host: '127.0.0.1'})
    fillers.push(socket)
    socket.on('error', () => {})
    const opened = await Promise.race([
      once(socket, 'connect').then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
    ])
    if (!opened) break
  }
  return {
    port,
    close: () => {
      for (const socket of fillers) socket.destroy()
      child.kill('SIGKILL')
    },
  }
}
