/**
 * @nosana/sdk keeps one module-level preset per network and merges every Client's config into it
 * (`Object.assign(preset, config)`): the second Client of a process sees the first one's addresses. The network's
 * CLI makes one Client per process; tests make several, so each file puts the presets back as the SDK ships them.
 */
import {IPFSConfigPreset, solanaConfigPreset} from '@nosana/sdk/dist/config.js'

// Taken when this module is first loaded, before any test has made a Client.
const PRISTINE = structuredClone({solana: solanaConfigPreset, ipfs: IPFSConfigPreset})

/** Puts the SDK's network presets back as it ships them (built-in addresses, pinning service and gateway). */
export function restoreSdkPresets(): void {
  for (const [presets, pristine] of [
    [solanaConfigPreset, PRISTINE.solana],
    [IPFSConfigPreset, PRISTINE.ipfs],
  ] as [Record<string, Record<string, unknown>>, Record<string, Record<string, unknown>>][]) {
    for (const network of Object.keys(pristine)) {
      const preset = presets[network]!
      for (const key of Object.keys(preset)) delete preset[key]
      Object.assign(preset, structuredClone(pristine[network]))
    }
  }
}
