/**
 * The localnet's own certificate authority and the gateway's server certificate it signs, kept in the data
 * directory (`tls/`, localnetTlsFiles): the authority is made at the first start and reused, so a client that trusts
 * it once (`NODE_EXTRA_CA_CERTS`, curl `--cacert`) goes on trusting every later certificate; the server certificate
 * is made again when it nears its end, when the names the gateway serves change, or when the authority is new.
 * ECDSA P-256 through Node's WebCrypto, certificates written by @peculiar/x509 (no native code, milliseconds). The
 * authority may name the loopback only (LOOPBACK_ONLY), so trusting it never lets its key vouch for another site.
 */
// @peculiar/x509 resolves its parts through tsyringe, which asks for the Reflect metadata polyfill first.
import 'reflect-metadata'
import {createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate} from 'node:crypto'
import {readFileSync} from 'node:fs'

import * as x509 from '@peculiar/x509'

import {GATEWAY_DOMAIN} from '../../gateway/gateway.js'
import {DEPLOYMENT_DOMAIN} from '../../gateway/stable-url.js'
import {writePrivateFile} from '../../keys/private-file.js'
import {localnetTlsFiles} from '../paths.js'

const ALGORITHM = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'} as const
const DAY_MS = 86_400_000
/** The authority lasts long: every client that trusts it would have to trust a new one. */
const CA_DAYS = 3650
/** The server certificate's life; made again at a start (or the running gateway's daily check) within RENEW_DAYS. */
const SERVER_DAYS = 365
const RENEW_DAYS = 30

/**
 * Every name level the gateway answers, each under one wildcard (a wildcard covers one label): its own name and
 * `localhost`; jobs, their ports, nodes and the network's 44-character hashes under `node.localhost`; deployments'
 * stable URLs under `deploy.localhost`; and 127.0.0.1 for a client that connects by address.
 */
export const GATEWAY_CERTIFICATE_NAMES: {dns: readonly string[]; ip: readonly string[]} = {
  dns: ['localhost', GATEWAY_DOMAIN, `*.${GATEWAY_DOMAIN}`, `*.${DEPLOYMENT_DOMAIN}`],
  ip: ['127.0.0.1'],
}

/** The gateway's certificate and key (PEM), the authority that signed it and what was made new this time. */
export interface GatewayCertificate {
  key: string
  cert: string
  /** The authority's certificate (PEM) and its file, the one a client trusts. */
  ca: string
  caFile: string
  notAfter: Date
  /** Whether the authority, or the server certificate, was made now (else read back from the data directory). */
  made: {ca: boolean; cert: boolean}
}

/** The authority and server certificate of a data directory: read back when still good, else made (and kept). */
export async function ensureGatewayCertificate(dataDir: string, now = new Date()): Promise<GatewayCertificate> {
  x509.cryptoProvider.set(webcrypto as Crypto)
  const files = localnetTlsFiles(dataDir)
  let ca = readAuthority(files.caCert, files.caKey, now)
  const madeCa = ca === null
  if (ca === null) {
    ca = await makeAuthority(now)
    // The key first: a certificate whose key is missing would be made again at the next start anyway.
    await writePrivateFile(files.caKey, ca.key)
    await writePrivateFile(files.caCert, ca.cert)
  }
  let server = madeCa ? null : readServer(files.cert, files.key, ca.cert, now)
  const madeCert = server === null
  if (server === null) {
    server = await makeServer(ca, now)
    await writePrivateFile(files.key, server.key)
    await writePrivateFile(files.cert, server.cert)
  }
  return {
    ...server,
    ca: ca.cert,
    caFile: files.caCert,
    made: {ca: madeCa, cert: madeCert},
  }
}

interface Pem {
  key: string
  cert: string
  notAfter: Date
}

/** Reads a file, or null when it is not there (or not readable). */
function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return null
  }
}

/** True while a certificate has more than RENEW_DAYS left and has begun. */
function current(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom) <= now && new Date(cert.validTo).getTime() - now.getTime() > RENEW_DAYS * DAY_MS
}

/** The kept authority, or null when it is missing, broken, its key is not its own or it nears its end. */
function readAuthority(certFile: string, keyFile: string, now: Date): Pem | null {
  const cert = readText(certFile)
  const key = readText(keyFile)
  if (cert === null || key === null) return null
  try {
    const parsed = new X509Certificate(cert)
    if (!parsed.ca || !current(parsed, now) || !parsed.checkPrivateKey(createPrivateKey(key))) return null
    return {key, cert, notAfter: new Date(parsed.validTo)}
  } catch {
    return null
  }
}

/** The kept server certificate, or null unless it is signed by `caCert`, has its key, is current and names all. */
function readServer(certFile: string, keyFile: string, caCert: string, now: Date): Pem | null {
  const cert = readText(certFile)
  const key = readText(keyFile)
  if (cert === null || key === null) return null
  try {
    const parsed = new X509Certificate(cert)
    const signed = parsed.verify(createPublicKey(caCert))
    if (!signed || !current(parsed, now) || !parsed.checkPrivateKey(createPrivateKey(key))) return null
    return namesOf(parsed) === wantedNames() ? {key, cert, notAfter: new Date(parsed.validTo)} : null
  } catch {
    return null
  }
}

/** A certificate's alternative names in one comparable line (Node writes `DNS:a, IP Address:b`). */
function namesOf(cert: X509Certificate): string {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .map((name) => name.replace(/^IP Address:/, 'IP:'))
    .sort()
    .join(',')
}

function wantedNames(): string {
  const {dns, ip} = GATEWAY_CERTIFICATE_NAMES
  return [...dns.map((name) => `DNS:${name}`), ...ip.map((address) => `IP:${address}`)].sort().join(',')
}

/** A positive random serial number (RFC 5280: at most 20 bytes, unique per issuer). */
function serial(): string {
  const bytes = randomBytes(16)
  bytes[0] = bytes[0]! & 0x7f
  return bytes.toString('hex')
}

async function pemKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY')
}

/**
 * The authority may name nothing but `localhost` and its subdomains and 127.0.0.0/8 (RFC 5280 name constraints,
 * critical, checked by OpenSSL, so by Node and curl): a client told to trust it is trusting it for the loopback
 * only, whoever reads its key. DER written out, as @peculiar/x509 has no class for it:
 * SEQUENCE { [0] { SEQUENCE { [2] "localhost" }, SEQUENCE { [7] 127.0.0.0 255.0.0.0 } } }.
 */
const LOOPBACK_ONLY = Buffer.concat([
  Buffer.from('301ba019300b8209', 'hex'),
  Buffer.from('localhost', 'ascii'),
  Buffer.from('300a87087f000000ff000000', 'hex'),
])
const NAME_CONSTRAINTS_OID = '2.5.29.30'

async function makeAuthority(now: Date): Promise<Pem> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair
  const notAfter = new Date(now.getTime() + CA_DAYS * DAY_MS)
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=gpunet localnet CA, O=gpunet',
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      // May sign end certificates only (path length 0).
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.Extension(NAME_CONSTRAINTS_OID, true, LOOPBACK_ONLY),
    ],
  })
  return {key: await pemKey(keys.privateKey), cert: cert.toString('pem'), notAfter}
}

async function makeServer(ca: Pem, now: Date): Promise<Pem> {
  const caCert = new x509.X509Certificate(ca.cert)
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.key), ALGORITHM, false, [
    'sign',
  ])
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair
  const notAfter = new Date(Math.min(now.getTime() + SERVER_DAYS * DAY_MS, caCert.notAfter.getTime()))
  const {dns, ip} = GATEWAY_CERTIFICATE_NAMES
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${GATEWAY_DOMAIN}`,
    issuer: caCert.subject,
    // A day back: a client whose clock is a little behind still takes it.
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...dns.map((value) => ({type: 'dns' as const, value})),
        ...ip.map((value) => ({type: 'ip' as const, value})),
      ]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  })
  return {key: await pemKey(keys.privateKey), cert: cert.toString('pem'), notAfter}
}
