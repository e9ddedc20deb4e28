#if !Commands
#error("LoupeCommands needs the package trait \"Commands\": depend on Loupe with traits: [\"Commands\"]")
#endif
