import KeychainProbe

// A second application: the same code under another module name, hence another executable hash.
KeychainProbe.main()
