/** A command's exit codes as data, rendered into its help the same way for every command. */

/** One row of a command's EXIT CODES section: the code (`N` for one passed on from what it ran) and when. */
export type ExitCodeRow = readonly [code: number | 'N', when: string]

/**
 * The command's description followed by its EXIT CODES section. Rendered when the class is defined, so oclif's
 * manifest and `help --json` carry the same text as `--help`.
 */
export function withExitCodes(description: string, codes: readonly ExitCodeRow[]): string {
  const rows = codes.map(([code, when]) => `  ${String(code).padEnd(5)}${when}`)
  return `${description}\n\nEXIT CODES\n${rows.join('\n')}`
}
