// Loads a client of the matrix from this package's own node_modules (see package.json): the
// specifier resolves from here, not from the project's root.
export const load = (name) => import(name);
