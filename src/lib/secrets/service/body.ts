import {badRequest} from '../../http/api-error.js'

// fatal: bytes that are not UTF-8 are refused instead of silently becoming U+FFFD.
const utf8 = new TextDecoder('utf-8', {fatal: true})

function text(body: Buffer): string {
  try {
    return utf8.decode(body)
  } catch {
    throw badRequest('malformed_body', 'the body is not valid UTF-8')
  }
}

/** A JSON body, decoded strictly; an empty body is malformed. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw badRequest('malformed_body', 'the body is empty; send a JSON object')
  try {
    return JSON.parse(text(body)) as unknown
  } catch (error) {
    if (error instanceof SyntaxError) throw badRequest('malformed_body', 'the body is not valid JSON')
    throw error
  }
}

/**
 * A form body (`a=1&b=2`), percent-decoded strictly: an escape that is not UTF-8 (or encodes a lone surrogate)
 * is refused. A name given twice gets an array of its values, which every parameter refuses.
 */
export function parseForm(body: Buffer): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>
  for (const pair of text(body).split('&')) {
    if (pair === '') continue
    const at = pair.indexOf('=')
    const name = decode(at === -1 ? pair : pair.slice(0, at))
    const value = at === -1 ? '' : decode(pair.slice(at + 1))
    const seen = params[name]
    // Appended in place: copying the array for each repeat made a body repeating one name quadratic.
    if (seen === undefined) params[name] = value
    else if (Array.isArray(seen)) seen.push(value)
    else params[name] = [seen, value]
  }
  return params
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '))
  } catch {
    throw badRequest('malformed_body', 'the form is not valid percent-encoded UTF-8')
  }
}
