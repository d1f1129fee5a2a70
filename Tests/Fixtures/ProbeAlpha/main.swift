import KeychainProbe

KeychainProbe.main()
