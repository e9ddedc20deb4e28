#if !YAML
#error("LoupeYAML needs the package trait \"YAML\": depend on Loupe with traits: [\"YAML\"]")
#endif
