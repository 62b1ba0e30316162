/** The tests' own environment variables (GPUNET_TEST_*, which test/support/setup.ts leaves in place). */

/** The PostgreSQL the end-to-end tests use; `.ci/run` starts one and sets it, each test process gets a database of its own. */
export const DATABASE_URL_ENV = 'GPUNET_TEST_DATABASE_URL'
