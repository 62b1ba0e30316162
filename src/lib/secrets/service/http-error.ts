/** An error the service answers with: a status and the `{"error":{"code","message"}}` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'HttpError'
  }
}

/** 400 with a code, for input the service refuses. */
export function badRequest(code: string, message: string): HttpError {
  return new HttpError(400, code, message)
}
