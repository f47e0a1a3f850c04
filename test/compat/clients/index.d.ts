/** Loads a package from test/compat/clients/node_modules; untyped, as the matrix drives it through its own narrow types. */
export declare function load(name: string): Promise<any>;
