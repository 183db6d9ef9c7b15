// Package lazyclientfix is package lazyclient fixed as
// kubernetes/kubernetes#92139 fixed client-go's client configuration race:
// ClientConfig takes the lock before its first look at the field, so
// every access to it holds the lock.
//
// Ground truth: no atomicity violation and no data race.
package lazyclientfix

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
	c.loadingLock.Lock()
	defer c.loadingLock.Unlock()
	if c.clientConfig == nil {
		c.clientConfig = c.load()
	}
	return c.clientConfig
}
