// Types of Strata's classic-level drop-in (strata-level/classic-level).
export * from 'strata-level/classic-level';
