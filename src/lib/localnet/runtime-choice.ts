/** The runtimes `localnet start --runtime` chooses from: podman when it works (else host processes if allowed), podman only, or the host's processes. */
export const RUNTIME_CHOICES = ['auto', 'podman', 'host'] as const
export type RuntimeChoice = (typeof RUNTIME_CHOICES)[number]
