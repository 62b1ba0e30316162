/** Where `--wait` stops: the job runs, its exposed services answer, or it ended. */
export const WAIT_POINTS = ['running', 'ready', 'done'] as const
export type WaitPoint = (typeof WAIT_POINTS)[number]
