/**
 * What the CLI bundle gives @solana/web3.js in place of node-fetch (an alias in scripts/build.js). web3.js calls it
 * only as the fetch of a Connection made without one, which then goes through `httpFetch` like every other request.
 * Left out with it: node-fetch and the URL and Unicode tables it loads (whatwg-url, tr46), parsed at every start.
 */
import {httpFetch, type RequestInit, type Response} from './client.js'

/** node-fetch's default export, as web3.js calls it. */
export default function fetch(url: string | URL, init?: RequestInit): Promise<Response> {
  return httpFetch(url, init)
}
