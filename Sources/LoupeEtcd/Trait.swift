#if !Etcd
#error("LoupeEtcd needs the package trait \"Etcd\": depend on Loupe with traits: [\"Etcd\"]")
#endif
