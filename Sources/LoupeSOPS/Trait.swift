#if !SOPS
#error("LoupeSOPS needs the package trait \"SOPS\": depend on Loupe with traits: [\"SOPS\"]")
#endif
