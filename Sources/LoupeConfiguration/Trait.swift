#if !Configuration
#error("LoupeConfiguration needs the package trait \"Configuration\": depend on Loupe with traits: [\"Configuration\"]")
#endif
