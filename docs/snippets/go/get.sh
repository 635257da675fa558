go get github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos@v1.5.0
