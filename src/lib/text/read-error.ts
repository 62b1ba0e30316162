/** A read failure in words, without a stack: "no such file", "permission denied", "it is a directory". */
export function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EISDIR') return 'it is a directory, not a file'
  return (error as Error)?.message ?? String(error)
}
