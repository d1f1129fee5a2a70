import KeychainProbe
KeychainProbe.main()
