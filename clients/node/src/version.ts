// version.ts — this package's version (package.json's, checked by the
// tests), sent when a worker announces itself.
export const VERSION = "0.1.0";
