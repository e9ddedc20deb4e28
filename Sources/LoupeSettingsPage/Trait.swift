#if !SettingsPage
#error("LoupeSettingsPage needs the package trait \"SettingsPage\": depend on Loupe with traits: [\"SettingsPage\"]")
#endif
