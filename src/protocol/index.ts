export * from './attributes.js';
export * from './codec.js';
export * from './expressions.js';
export * from './limits.js';
export * from './requests.js';
export * from './statements.js';
export * from './guard.js';
export * from './fencing.js';
