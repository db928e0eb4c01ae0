// Types of Strata's browser-level drop-in (strata-level/browser-level).
export * from 'strata-level/browser-level';
