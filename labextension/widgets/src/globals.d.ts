// Put in by widgets/build.mjs (esbuild's define): mediagen.css and the first 16 hex digits of
// its SHA-256, which tells a page's copy of the sheet from another mediagen version's.
declare const MEDIAGEN_SHARED_CSS: string;
declare const MEDIAGEN_SHARED_CSS_HASH: string;
