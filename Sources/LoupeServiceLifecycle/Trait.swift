#if !ServiceLifecycle
#error(
    "LoupeServiceLifecycle needs the package trait \"ServiceLifecycle\": depend on Loupe with traits: [\"ServiceLifecycle\"]"
)
#endif
