/** Reads all of standard input as bytes. */
export async function readStdinBytes(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Reads all of standard input as UTF-8 text. */
export async function readStdin(): Promise<string> {
  return (await readStdinBytes()).toString('utf8')
}
