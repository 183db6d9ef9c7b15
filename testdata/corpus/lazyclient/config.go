// Package lazyclient is modelled on the client configuration race of
// Kubernetes' client-go (kubernetes/kubernetes#92139, "Fix client config
// data race"): DeferredLoadingClientConfig loaded its configuration on
// first use with double-checked locking whose first check read the field
// without the lock, while the load stored it under the lock. The store
// re-checks under the lock, so the configuration is loaded once; but the
// unlocked check (and the unlocked read that returns the field) race with
// the store, and a caller may see the pointer before what it points to.
//
// Ground truth: a data race on c.clientConfig (the unlocked reads against
// the locked store); no atomicity violation (the store re-checks under the
// lock).
package lazyclient

import "sync"

// ClientConfig is a loaded client configuration.
type ClientConfig struct {
	Host string
}

// DeferredLoadingClientConfig loads its configuration on first use.
type DeferredLoadingClientConfig struct {
	loadingLock  sync.Mutex
	clientConfig *ClientConfig
	load         func() *ClientConfig // reads the kubeconfig files
}

// New returns a configuration that load loads on first use.
func New(load func() *ClientConfig) *DeferredLoadingClientConfig {
	return &DeferredLoadingClientConfig{load: load}
}

// ClientConfig returns the configuration, loading it on first use.
func (c *DeferredLoadingClientConfig) ClientConfig() *ClientConfig {
	if c.clientConfig == nil {
		c.loadingLock.Lock()
		defer c.loadingLock.Unlock()
		if c.clientConfig == nil {
			c.clientConfig = c.load()
		}
	}
	return c.clientConfig
}
